//! prism-tools-native: the tool harness of `@arnilo/prism` as a Node.js addon.
//! Each concern is its own module of plain Rust; `js` holds every napi export.

mod js;
mod search;

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
