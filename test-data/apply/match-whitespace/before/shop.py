class Shop:
    def total(self):
        if self.items:
            return sum(self.items)
        return 0
