const request = require('supertest');
const app = require('../server');

test('rejects a todo without a title', async () => {
  await request(app).post('/todos').send({}).expect(400);
});
