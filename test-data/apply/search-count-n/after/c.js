const A = 2;
const B = 2;
let c = A + B;
const D = 2;
