# rest of file unchanged
x = 1
