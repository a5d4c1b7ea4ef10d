//! parse tests
