def a():
    return 0


def b():
        return 0
