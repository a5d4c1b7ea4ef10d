fetch("https://c");
