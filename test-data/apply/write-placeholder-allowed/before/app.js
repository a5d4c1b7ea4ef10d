function f1() {
  return 1;
}

function f2() {
  return 2;
}

function f3() {
  return 3;
}

function f4() {
  return 4;
}

function f5() {
  return 5;
}

function f6() {
  return 6;
}

function f7() {
  return 7;
}

function f8() {
  return 8;
}

