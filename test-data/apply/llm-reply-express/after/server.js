const express = require('express');
const app = express();
app.use(express.json());

let todos = [];

app.get('/todos', (req, res) => {
  res.json(todos);
});

app.post('/todos', (req, res) => {
  if (typeof req.body.title !== 'string') {
    return res.status(400).json({ error: 'title is required' });
  }
  todos.push({ title: req.body.title, done: false });
  res.status(201).json(todos[todos.length - 1]);
});

app.listen(3000);
