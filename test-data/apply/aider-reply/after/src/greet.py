def greet(name="world"):
    print(f"hello, {name}")


greet("clada")
