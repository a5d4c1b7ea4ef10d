//! Crash safety and concurrency of `git clada apply`.
