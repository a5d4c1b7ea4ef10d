def greet():
    print("hi")


greet()
