class Shop:
    def total(self):
        if self.items:
            # prices are in cents
            return sum(i.price for i in self.items)
        return 0
