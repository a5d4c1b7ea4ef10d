import sys


def process(items):
    return sum(items)


def main():
    print(process(sys.argv))
