import os


def a():
    return 1


def b():
    return 2


def c():
    return 3
