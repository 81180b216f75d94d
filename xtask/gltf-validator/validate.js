// `cargo xtask validate-gltf`: runs the Khronos glTF Validator (npm
// `gltf-validator`) on one model and prints its JSON report on stdout.
//
//   node validate.js VALIDATOR_MODULE_DIR MODEL
//
// A .gltf's external resources (.bin, images) are read beside the model.
// Exit code 0 when the validator produced a report (whatever it says),
// 1 when it could not run.
'use strict';

const fs = require('fs');
const path = require('path');

const [validatorDir, model] = process.argv.slice(2);
if (!validatorDir || !model) {
  console.error('usage: node validate.js VALIDATOR_MODULE_DIR MODEL');
  process.exit(1);
}
const validator = require(path.resolve(validatorDir));
const dir = path.dirname(path.resolve(model));

validator
  .validateBytes(new Uint8Array(fs.readFileSync(model)), {
    uri: path.resolve(model),
    maxIssues: 0, // unlimited
    externalResourceFunction: (uri) =>
      new Promise((resolve, reject) => {
        const file = path.resolve(dir, decodeURIComponent(uri));
        fs.readFile(file, (err, data) => (err ? reject(err.toString()) : resolve(new Uint8Array(data))));
      }),
  })
  .then(
    (report) => {
      process.stdout.write(JSON.stringify(report, null, 2) + '\n');
    },
    (err) => {
      console.error(`gltf-validator failed on ${model}: ${err}`);
      process.exit(1);
    },
  );
