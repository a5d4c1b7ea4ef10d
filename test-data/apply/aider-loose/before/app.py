class App:
    def run(self):
        if ready:
            start()

    def stop(self):
            log("stopping")
            stop()
        pass

    def other(self):
        pass
def helper():
    return 1
