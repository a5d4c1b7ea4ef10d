import { PORT } from './config.js';
const port = PORT;
app.listen(port);
