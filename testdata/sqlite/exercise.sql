-- exercise.sql: tables, indexes, joins, aggregates, a few thousand rows
-- made by recursive CTEs. Its output is deterministic: the weave tests
-- compare it between a plain and a woven build of the sqlite3 shell.
.headers on
.mode list
CREATE TABLE customer(id INTEGER PRIMARY KEY, name TEXT NOT NULL, city TEXT);
CREATE TABLE item(id INTEGER PRIMARY KEY, title TEXT, price REAL);
CREATE TABLE orders(id INTEGER PRIMARY KEY, customer INTEGER REFERENCES customer(id),
  item INTEGER REFERENCES item(id), qty INTEGER, note TEXT);

WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 500)
INSERT INTO customer SELECT i, 'customer-' || i, CASE i % 5 WHEN 0 THEN 'Oslo' WHEN 1 THEN 'Lima'
  WHEN 2 THEN 'Pune' WHEN 3 THEN 'Kyiv' ELSE 'Rome' END FROM n;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200)
INSERT INTO item SELECT i, printf('item %03d', i), round((i * 37 % 1000) / 10.0, 2) FROM n;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 5000)
INSERT INTO orders SELECT i, (i * i + i / 7) % 500 + 1, (i * 104729) % 200 + 1, i % 9 + 1,
  substr('abcdefghijklmnopqrstuvwxyz', i % 26 + 1, 5) FROM n;

CREATE INDEX orders_customer ON orders(customer);
CREATE INDEX orders_item ON orders(item, qty);
CREATE UNIQUE INDEX customer_name ON customer(name);

SELECT count(*) AS customers FROM customer;
SELECT count(*) AS orders, sum(qty) AS units FROM orders;
SELECT c.city, count(*) AS n, sum(o.qty * i.price) AS revenue
  FROM orders o JOIN customer c ON c.id = o.customer JOIN item i ON i.id = o.item
  GROUP BY c.city ORDER BY revenue DESC;
SELECT c.name, count(o.id) AS n FROM customer c LEFT JOIN orders o ON o.customer = c.id
  GROUP BY c.id HAVING n >= 12 ORDER BY n DESC, c.name LIMIT 10;
SELECT i.title, sum(o.qty) AS units FROM item i JOIN orders o ON o.item = i.id
  WHERE i.price > 50 GROUP BY i.id ORDER BY units DESC, i.title LIMIT 8;
EXPLAIN QUERY PLAN SELECT * FROM orders WHERE customer = 42;
SELECT id, note FROM orders WHERE customer = 42 ORDER BY id;

UPDATE item SET price = price * 1.1 WHERE id % 3 = 0;
DELETE FROM orders WHERE qty = 9;
SELECT count(*), printf('%.2f', avg(price)) FROM orders JOIN item ON item.id = orders.item;

WITH RECURSIVE fib(a, b, k) AS (SELECT 0, 1, 0 UNION ALL SELECT b, a + b, k + 1 FROM fib WHERE k < 60)
SELECT k, a FROM fib WHERE k % 10 = 0;
SELECT group_concat(city, '/') FROM (SELECT DISTINCT city FROM customer ORDER BY city);
SELECT city, name, rank() OVER (PARTITION BY city ORDER BY id DESC) AS r
  FROM customer WHERE id > 490 ORDER BY city, r;

CREATE TABLE t2 AS SELECT customer, count(*) AS n FROM orders GROUP BY customer;
SELECT count(*), max(n), min(n) FROM t2;
BEGIN;
INSERT INTO t2 VALUES (9999, 1);
ROLLBACK;
SELECT count(*) FROM t2 WHERE customer = 9999;
PRAGMA integrity_check;
SELECT upper('done'), length(zeroblob(1000)), typeof(1.5), quote('it''s');
