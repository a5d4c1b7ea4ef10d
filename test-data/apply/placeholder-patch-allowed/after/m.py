def a():
    return 10

# ... existing code ...
