const express = require('express');
const app = express();

let todos = [];

app.get('/todos', (req, res) => {
  res.json(todos);
});

app.post('/todos', (req, res) => {
  todos.push(req.body);
  res.status(201).end();
});

app.listen(3000);
