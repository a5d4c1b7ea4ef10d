function f1() {
  return 100;
}

// ... existing code ...
