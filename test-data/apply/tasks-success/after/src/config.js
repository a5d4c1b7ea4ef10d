export const PORT = 8080;
