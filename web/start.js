// tierwise dashboard, part 4: the handlers and the start (after app.js,
// charts.js and pages.js).
'use strict';

$('#login-form').addEventListener('submit', signIn);
$('#logout').addEventListener('click', () => logout());
$('#refresh').addEventListener('click', () => route());
$('#skip').addEventListener('click', (ev) => { ev.preventDefault(); $('#main').focus(); });
window.addEventListener('hashchange', () => route());

if (token()) start(); else logout();
