const A = 1;
const B = 1;
let c = A + B;
const D = 1;
