msg = "It’s done"
label = “Start”
