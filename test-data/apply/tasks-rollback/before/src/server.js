const port = 3000;
app.listen(port);
