import os
import sys


def load_config(path):
    with open(path) as f:
        return f.read()


def main():
    config = load_config("config.ini")
    print("starting with", config)
    return 0


if __name__ == "__main__":
    sys.exit(main())
