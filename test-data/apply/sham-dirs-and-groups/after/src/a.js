let url = "https://a";
let b = "https://b";
