// GitHub Action entrypoint. Filled in by the Action issue; for now it says so and exits cleanly.
console.log("acp-warden: the GitHub Action front door is not implemented yet.");
