fetch("http://c");
