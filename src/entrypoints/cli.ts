console.log("acp-warden");
