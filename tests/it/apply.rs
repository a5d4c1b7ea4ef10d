//! End-to-end tests of `git clada apply` in hermetic repositories.
