class App:
    def run(self):
        if ready and not stopped:
            start()

    def stop(self):
            log("stopping now")
            stop()
        pass

    def other(self):
        pass
def helper():
    return 2
