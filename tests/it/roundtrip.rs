//! roundtrip tests
