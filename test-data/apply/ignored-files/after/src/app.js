console.log("v2");
