//! prism-tools-native: the napi exports. Each concern lives in its own module.
#[napi_derive::napi]
pub fn native_version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

#[cfg(test)]
mod tests {
    #[test]
    fn version_is_the_crate_version() {
        assert_eq!(super::native_version(), env!("CARGO_PKG_VERSION"));
    }
}
