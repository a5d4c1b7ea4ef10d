def calculate(a, b):
    result = a + b
    return result


def main():
    print(calculate(2, 3))
