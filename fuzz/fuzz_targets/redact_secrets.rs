#![no_main]
// See prism_tools_core::fuzz_api::redact_secrets for the invariants checked.
libfuzzer_sys::fuzz_target!(|data: &[u8]| prism_tools_core::fuzz_api::redact_secrets(data));
