import sys


def process(items):
    total = 0
    for item in items:
        total += item
    return total


def main():
    print(process(sys.argv))
