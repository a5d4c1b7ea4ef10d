# rest of file unchanged
x = 1
y = 2
z = 3
w = 4
