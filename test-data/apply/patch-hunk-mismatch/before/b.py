def total(items):
    return sum(i.price for i in items)
