console.log("v1");
