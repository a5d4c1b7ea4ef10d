//! help tests
