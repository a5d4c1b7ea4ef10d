const port = 3000;
