from greet import greet

assert greet("x") == "Hello, x"
