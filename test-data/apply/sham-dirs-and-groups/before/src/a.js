let url = "http://a";
let b = "http://b";
