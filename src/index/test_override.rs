//! `test_override!`: a setting the kinds read through a function that returns its default,
//! except inside a test's scope (a tokio task-local), so that a test reads a small fixture
//! as a large index of the same layout is read, or feeds an index values lance would not
//! write. Outside `cfg(test)` the function is the default alone.

/// `test_override!(STATIC: Type = default; getter; with_scope)` defines `fn getter() ->
/// Type` (the default, or the value of the innermost `with_scope` around the running
/// future) and, in tests, `pub(crate) async fn with_scope(value, future)`. Doc comments
/// may precede `getter` and `with_scope`.
macro_rules! test_override {
    (
        $static:ident: $ty:ty = $default:expr;
        $(#[$get_meta:meta])* $get:ident;
        $(#[$with_meta:meta])* $with:ident
    ) => {
        #[cfg(test)]
        tokio::task_local! {
            static $static: $ty;
        }

        $(#[$get_meta])*
        fn $get() -> $ty {
            #[cfg(test)]
            if let Ok(value) = $static.try_with(|v| *v) {
                return value;
            }
            $default
        }

        $(#[$with_meta])*
        #[cfg(test)]
        pub(crate) async fn $with<F: std::future::Future>(value: $ty, f: F) -> F::Output {
            $static.scope(value, f).await
        }
    };
}
