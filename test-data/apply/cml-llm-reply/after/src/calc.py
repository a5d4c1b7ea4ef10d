def calculate(a, b):
    """Multiply a by b."""
    return a * b


def main():
    print(calculate(2, 3))
