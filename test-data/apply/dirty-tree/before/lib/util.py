def u():
    pass
