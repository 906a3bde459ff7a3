"""Syntax-tree chunking with the real grammars: symbols, kinds, parents and line ranges."""
from __future__ import annotations

from textwrap import dedent

from probe_core.chunking import chunk_file

from .chunk_checks import check_invariants, find, span


def chunks_of(path: str, source: str):
    text = dedent(source).lstrip("\n")
    chunks = chunk_file(path, text)
    check_invariants(text, chunks)
    return chunks


PYTHON = '''
"""Module doc."""
import os

X = 1


@dataclass
@other(arg=1)
class Point(Base):
    """A point."""

    x: int = 0

    @property
    def norm(self):
        def inner():
            return 1
        return inner()

    # Comment about move
    async def move(self, dx):
        self.x += dx

    LIMIT = 3

    class Meta:
        ordering = ["x"]

        def q(self):
            pass


def helper():
    return Point()


CONSTANT = helper()

if __name__ == "__main__":
    helper()
'''


def test_python_classes_methods_and_header() -> None:
    chunks = chunks_of("pkg/geometry.py", PYTHON)
    header = chunks[0]
    assert (header.symbol_kind, header.symbol, span(header)) == ("header", None, (1, 4))
    assert "import os" in header.text and "X = 1" in header.text
    point = find(chunks, "Point", "class", parent=None)
    assert span(point) == (7, 12)  # decorators, docstring and fields up to the first method
    assert point.text.startswith("@dataclass\n@other(arg=1)\nclass Point(Base):")
    assert not point.is_fragment
    norm = find(chunks, "norm", "method", parent="Point")
    assert span(norm) == (14, 18) and norm.text.lstrip().startswith("@property")
    move = find(chunks, "move", "method", parent="Point")
    assert span(move) == (20, 22) and "# Comment about move" in move.text
    limit = [c for c in chunks if c.symbol == "Point" and c.is_fragment]
    assert [span(c) for c in limit] == [(24, 24)]  # a class field between methods
    assert span(find(chunks, "Meta", "class", parent="Point")) == (26, 27)
    assert span(find(chunks, "q", "method", parent="Meta")) == (29, 30)
    assert span(find(chunks, "helper", "function", parent=None)) == (33, 34)
    tail = chunks[-1]
    assert (tail.symbol_kind, span(tail)) == ("header", (37, 40))
    assert not [c for c in chunks if c.symbol == "inner"], "nested functions stay in their parent"
    assert {(c.language, c.chunk_kind, c.path) for c in chunks} == {("python", "code", "pkg/geometry.py")}


def test_python_small_class_without_methods_is_one_chunk() -> None:
    chunks = chunks_of("m.py", '''
        @dataclass(frozen=True)
        class Pair:
            a: int
            b: int
        ''')
    assert [(c.symbol, c.symbol_kind, span(c)) for c in chunks] == [("Pair", "class", (1, 4))]


def test_python_test_file_kind() -> None:
    chunks = chunks_of("tests/test_geometry.py", "def test_norm():\n    assert True\n")
    assert [(c.symbol, c.chunk_kind) for c in chunks] == [("test_norm", "test")]


JAVASCRIPT = '''
import x from "y";

/**
 * A class.
 */
export default class Widget extends Base {
  static count = 1;

  constructor() {
    super();
  }

  get size() { return 1; }

  handle = () => {
    go();
  };
}

export function render() {}
export const fetchAll = async (a) => {
  return a;
};
module.exports = { render };
Widget.prototype.extra = function () {
  return 1;
};
const Memo = React.memo((props) => {
  return null;
});
'''


def test_javascript() -> None:
    chunks = chunks_of("web/widget.js", JAVASCRIPT)
    assert span(chunks[0]) == (1, 1) and chunks[0].symbol_kind == "header"
    widget = find(chunks, "Widget", "class", parent=None)
    assert span(widget) == (3, 7) and widget.text.startswith("/**")  # JSDoc belongs to the class
    assert span(find(chunks, "constructor", "method", parent="Widget")) == (9, 11)
    assert span(find(chunks, "size", "method", parent="Widget")) == (13, 13)
    assert span(find(chunks, "handle", "method", parent="Widget")) == (15, 18)  # `}` of the class too
    assert span(find(chunks, "render", "function")) == (20, 20)
    assert span(find(chunks, "fetchAll", "function")) == (21, 23)
    assert span(find(chunks, "extra", "method", parent="Widget")) == (25, 27)
    assert span(find(chunks, "Memo", "function")) == (28, 30)
    exports = [c for c in chunks if "module.exports" in c.text]
    assert len(exports) == 1 and exports[0].symbol_kind == "header"


TYPESCRIPT = '''
import { x } from "y";

export interface Shape {
  area(): number;
  name: string;
}

type Id = string;

export type Options = {
  verbose: boolean;
};

export enum Color {
  Red,
  Green,
}

@Component({ selector: "app" })
export class Circle implements Shape {
  private r: number = 1;

  constructor(r: number) {
    this.r = r;
  }

  area(): number {
    return 3.14 * this.r * this.r;
  }
}

namespace Geometry {
  export function origin() {
    return 0;
  }
}

export default function () {}
'''


def test_typescript() -> None:
    chunks = chunks_of("src/shapes.ts", TYPESCRIPT)
    assert span(find(chunks, "Shape", "interface")) == (3, 6)
    alias = [c for c in chunks if "type Id = string;" in c.text]
    assert len(alias) == 1 and alias[0].symbol_kind == "header"  # one-line aliases stay in the header
    assert span(find(chunks, "Options", "type")) == (10, 12)
    assert span(find(chunks, "Color", "enum")) == (14, 17)
    circle = find(chunks, "Circle", "class")
    assert span(circle) == (19, 21) and circle.text.startswith("@Component")
    assert span(find(chunks, "constructor", "method", parent="Circle")) == (23, 25)
    assert span(find(chunks, "area", "method", parent="Circle")) == (27, 30)
    assert span(find(chunks, "origin", "function", parent="Geometry")) == (33, 36)
    assert span(find(chunks, "default", "function")) == (38, 38)


TSX = '''
import React from "react";

interface Props {
  name: string;
}

export function Hello({ name }: Props) {
  return <div>Hello {name}</div>;
}

export const Button = (props: Props) => {
  return <button>{props.name}</button>;
};

export default class App extends React.Component<Props> {
  state = { n: 0 };

  render() {
    return <Hello name="x" />;
  }
}
'''


def test_tsx() -> None:
    chunks = chunks_of("web/App.tsx", TSX)
    assert all(c.language == "tsx" for c in chunks)
    assert span(find(chunks, "Props", "interface")) == (3, 5)
    assert span(find(chunks, "Hello", "function")) == (7, 9)
    assert span(find(chunks, "Button", "function")) == (11, 13)
    assert span(find(chunks, "App", "class")) == (15, 16)
    assert span(find(chunks, "render", "method", parent="App")) == (18, 21)


GO = '''
// Package shapes draws.
package shapes

import (
	"fmt"
)

const Pi = 3.14

// Circle is round.
type Circle struct {
	R float64
}

type ID string

// Area of c.
func (c *Circle) Area() float64 {
	return Pi * c.R * c.R
}

func (b Box[T]) Size() int { return 0 }

func New() *Circle {
	fmt.Println()
	return &Circle{}
}

var registry = map[string]int{}
'''


def test_go() -> None:
    chunks = chunks_of("shapes/circle.go", GO)
    header = chunks[0]
    assert (header.symbol_kind, span(header)) == ("header", (1, 8))
    assert "package shapes" in header.text and "const Pi" in header.text
    assert span(find(chunks, "Circle", "struct")) == (10, 13)
    assert span(find(chunks, "Area", "method", parent="Circle")) == (17, 20)
    assert span(find(chunks, "Size", "method", parent="Box")) == (22, 22)
    assert span(find(chunks, "New", "function", parent=None)) == (24, 27)
    assert chunks[-1].symbol_kind == "header" and span(chunks[-1]) == (29, 29)


RUST = '''
use std::fmt;

/// A point.
#[derive(Debug, Clone)]
pub struct Point {
    x: i32,
}

pub enum Shape {
    Dot,
}

pub trait Area {
    fn area(&self) -> f64;
}

impl<T> fmt::Display for Wrapper<T> where T: fmt::Debug {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "w")
    }
}

impl Point {
    pub const ORIGIN: i32 = 0;

    /// Make one.
    pub fn new(x: i32) -> Self {
        Point { x }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn makes_points() {
        assert_eq!(Point::new(1).x, 1);
    }
}
'''


def test_rust() -> None:
    chunks = chunks_of("src/point.rs", RUST)
    point = find(chunks, "Point", "struct")
    assert span(point) == (3, 7) and point.text.startswith("/// A point.\n#[derive")
    assert span(find(chunks, "Shape", "enum")) == (9, 11)
    assert span(find(chunks, "Area", "trait")) == (13, 15)  # signatures only: kept whole
    # an impl header that is only `impl ... {` opens its first method's chunk
    assert not [c for c in chunks if c.symbol == "Wrapper" and c.symbol_kind == "impl"]
    fmt = find(chunks, "fmt", "method", parent="Wrapper")
    assert span(fmt) == (17, 21) and fmt.text.startswith("impl<T> fmt::Display for Wrapper<T>")
    assert span(find(chunks, "Point", "impl")) == (23, 24)  # holds a const: kept
    new = find(chunks, "new", "method", parent="Point")
    assert span(new) == (26, 30) and new.text.lstrip().startswith("/// Make one.")
    test_fn = find(chunks, "makes_points", "function", parent="tests")
    assert test_fn.text.lstrip().startswith("#[test]")
    mod_header = [c for c in chunks if "mod tests {" in c.text]
    assert mod_header[0].symbol_kind == "header"


JAVA = '''
package com.example;

import java.util.List;

/** A service. */
@Service
public class UserService extends Base {
  private final Repo repo;

  public UserService(Repo repo) {
    this.repo = repo;
  }

  @Override
  public List<User> all() {
    return repo.all();
  }

  static class Cache {
    void clear() {}
  }
}

interface Repo {
  List<User> all();
  default int size() { return 0; }
}
'''


def test_java() -> None:
    chunks = chunks_of("src/main/java/com/example/UserService.java", JAVA)
    assert span(chunks[0]) == (1, 3)
    service = find(chunks, "UserService", "class", parent=None)
    assert span(service) == (5, 8) and service.text.startswith("/** A service. */\n@Service")
    assert span(find(chunks, "UserService", "method", parent="UserService")) == (10, 12)
    all_ = find(chunks, "all", "method", parent="UserService")
    assert span(all_) == (14, 17) and all_.text.lstrip().startswith("@Override")
    assert span(find(chunks, "Cache", "class", parent="UserService")) == (19, 19)
    assert span(find(chunks, "clear", "method", parent="Cache")) == (20, 22)
    assert span(find(chunks, "Repo", "interface")) == (24, 25)
    assert span(find(chunks, "size", "method", parent="Repo")) == (26, 27)


def test_java_test_file_kind() -> None:
    chunks = chunks_of("src/test/java/UserServiceTest.java", "class UserServiceTest {\n  void t() {}\n}\n")
    assert {c.chunk_kind for c in chunks} == {"test"}


C_SOURCE = '''
#include <stdio.h>

#define MAX 10

typedef struct {
  int a;
} pair_t;

struct node {
  struct node *next;
};

/* Add one. */
static int *
add_one(int *x)
{
  (*x)++;
  return x;
}

int main(void) { return 0; }
'''


def test_c() -> None:
    chunks = chunks_of("src/main.c", C_SOURCE)
    assert span(chunks[0]) == (1, 3)
    assert span(find(chunks, "pair_t", "struct")) == (5, 7)
    assert span(find(chunks, "node", "struct")) == (9, 11)
    add = find(chunks, "add_one", "function")
    assert span(add) == (13, 19) and add.text.startswith("/* Add one. */")
    assert span(find(chunks, "main", "function")) == (21, 21)


CPP = '''
#ifndef SHAPES_H
#define SHAPES_H
#include <string>

namespace geo {

// A shape.
template <typename T>
class Shape : public Base {
 public:
  Shape();
  int sides = 0;

  T area() const {
    return T();
  }

  ~Shape() {}
};

void Shape::draw() const {
  render();
}

}  // namespace geo

#endif
'''


def test_cpp_header_with_namespace_template_and_include_guard() -> None:
    chunks = chunks_of("include/shapes.h", CPP)  # a .h with C++ inside: parsed as C++
    assert all(c.language == "c" for c in chunks)
    shape = find(chunks, "Shape", "class", parent="geo")
    assert span(shape) == (7, 12) and shape.text.startswith("// A shape.\ntemplate <typename T>")
    assert span(find(chunks, "area", "method", parent="Shape")) == (14, 16)
    assert span(find(chunks, "~Shape", "method", parent="Shape")) == (18, 19)  # with `};`
    assert span(find(chunks, "draw", "method", parent="Shape")) == (21, 27)  # closers fold in
    assert span(chunks[0]) == (1, 5) and chunks[0].symbol_kind == "header"


RUBY = '''
require "json"

module Billing
  # An invoice.
  class Invoice < Base
    attr_reader :total

    def initialize(total)
      @total = total
    end

    def self.load(path)
      new(JSON.parse(File.read(path)))
    end
  end

  def self.helper; end
end

def top_level
  1
end
'''


def test_ruby() -> None:
    chunks = chunks_of("lib/billing.rb", RUBY)
    assert span(find(chunks, "Billing", "module")) == (3, 3)
    invoice = find(chunks, "Invoice", "class", parent="Billing")
    assert span(invoice) == (4, 6) and invoice.text.lstrip().startswith("# An invoice.")
    assert span(find(chunks, "initialize", "method", parent="Invoice")) == (8, 10)
    assert span(find(chunks, "load", "method", parent="Invoice")) == (12, 15)
    assert span(find(chunks, "helper", "method", parent="Billing")) == (17, 18)
    assert span(find(chunks, "top_level", "function", parent=None)) == (20, 22)


def test_csharp() -> None:
    chunks = chunks_of("src/Greeter.cs", '''
        using System;

        namespace Demo
        {
            /// <summary>Greets.</summary>
            [Serializable]
            public class Greeter
            {
                private string name;

                public Greeter(string name) { this.name = name; }

                public string Greet()
                {
                    return "hi " + name;
                }
            }
        }
        ''')
    greeter = find(chunks, "Greeter", "class", parent="Demo")
    assert span(greeter) == (5, 9) and greeter.text.lstrip().startswith("/// <summary>")
    assert span(find(chunks, "Greeter", "method", parent="Greeter")) == (11, 11)
    assert span(find(chunks, "Greet", "method", parent="Greeter")) == (13, 18)


def test_php() -> None:
    chunks = chunks_of("src/Cart.php", '''
        <?php
        namespace Shop;

        function total(array $items) {
            return 0;
        }

        class Cart extends Base {
            private $items = [];

            public function add($item) {
                $this->items[] = $item;
            }
        }
        ''')
    assert span(find(chunks, "total", "function")) == (4, 6)
    assert span(find(chunks, "Cart", "class")) == (8, 9)
    assert span(find(chunks, "add", "method", parent="Cart")) == (11, 14)


def test_kotlin() -> None:
    chunks = chunks_of("src/Main.kt", '''
        package demo

        import kotlin.math.PI

        @JvmInline
        class Circle(val r: Double) : Shape {
            val label = "c"

            fun area(): Double {
                return PI * r * r
            }
        }

        interface Shape { fun area(): Double }

        fun main() {
            println(Circle(1.0).area())
        }
        ''')
    assert span(find(chunks, "Circle", "class")) == (5, 7)
    assert span(find(chunks, "area", "method", parent="Circle")) == (9, 12)
    assert span(find(chunks, "Shape", "interface")) == (14, 14)
    assert span(find(chunks, "main", "function")) == (16, 18)


def test_swift() -> None:
    chunks = chunks_of("Sources/Shapes.swift", '''
        import Foundation

        struct Circle {
            var r: Double

            func area() -> Double {
                return r * r
            }
        }

        extension Circle {
            init(d: Double) { self.r = d / 2 }
        }

        func main() {}
        ''')
    assert span(find(chunks, "Circle", "struct")) == (3, 4)
    assert span(find(chunks, "area", "method", parent="Circle")) == (6, 9)
    assert span(find(chunks, "init", "method", parent="Circle")) == (11, 13)  # `extension Circle {` too
    assert span(find(chunks, "main", "function")) == (15, 15)
