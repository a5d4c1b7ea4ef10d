def u():
    return 1
