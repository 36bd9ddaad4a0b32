// boardgame.io hosting Collapsi 4x4 (bench/peers): moves run on the server only
// (client: false), the lobby API and the socket.io transport on one loopback port.
// Usage: node bgio_server.js PORT
"use strict";

const { Server } = require("boardgame.io/server");
const { Collapsi } = require("./bgio_game.js");

const port = Number(process.argv[2]);
const server = Server({ games: [Collapsi], origins: [/127\.0\.0\.1:\d+/] });
// listen on loopback only (koa-socket-2 made app.listen its HTTP server's listen)
const listen = server.app.listen;
server.app.listen = (p, cb) => listen.call(server.app, p, "127.0.0.1", cb);
server.run(port);
