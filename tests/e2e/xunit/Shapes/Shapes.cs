// The library under test of the coverlet comparison (tests/e2e_coverlet.rs):
// branches, loops, async, generics, exceptions, a switch expression,
// lambdas, an iterator, a property, a static constructor; some of it never
// called by the tests (Shapes.Tests), so both tools report lines not run.
using System;
using System.Collections.Generic;
using System.Linq;
using System.Threading.Tasks;

namespace Shapes
{
    public abstract class Shape
    {
        public abstract double Area { get; }

        public virtual string Describe()
        {
            return GetType().Name + " of area " + Area.ToString("F2");
        }
    }

    public sealed class Circle : Shape
    {
        public Circle(double radius)
        {
            if (radius < 0)
            {
                throw new ArgumentOutOfRangeException(nameof(radius));
            }
            Radius = radius;
        }

        public double Radius { get; }

        public override double Area => Math.PI * Radius * Radius;
    }

    public sealed class Rect : Shape
    {
        public Rect(double width, double height)
        {
            Width = width;
            Height = height;
        }

        public double Width { get; }
        public double Height { get; }

        public override double Area => Width * Height;

        public bool IsSquare => Width == Height;
    }

    public static class Geometry
    {
        static readonly Dictionary<string, int> sides;

        static Geometry()
        {
            sides = new Dictionary<string, int> { ["triangle"] = 3, ["square"] = 4 };
        }

        public static int Sides(string name)
        {
            if (sides.TryGetValue(name, out int n))
            {
                return n;
            }
            return -1;
        }

        public static string Classify(Shape shape) => shape switch
        {
            Circle c when c.Radius == 0 => "point",
            Circle => "round",
            Rect r when r.IsSquare => "square",
            Rect => "rectangle",
            _ => "unknown",
        };

        public static double TotalArea(IEnumerable<Shape> shapes)
        {
            double total = 0;
            foreach (Shape shape in shapes)
            {
                total += shape.Area;
            }
            return total;
        }

        public static IEnumerable<int> Squares(int count)
        {
            for (int i = 0; i < count; i++)
            {
                yield return i * i;
            }
        }

        public static List<T> Largest<T>(IEnumerable<T> items, Func<T, double> key, int n)
        {
            return items.OrderByDescending(item => key(item)).Take(n).ToList();
        }

        public static int ParseOrDefault(string text, int fallback)
        {
            try
            {
                return int.Parse(text);
            }
            catch (FormatException)
            {
                return fallback;
            }
            finally
            {
                Parsed++;
            }
        }

        public static int Parsed { get; private set; }

        public static async Task<double> AreaLaterAsync(Shape shape, int delayMs)
        {
            await Task.Delay(delayMs);
            if (shape is null)
            {
                throw new ArgumentNullException(nameof(shape));
            }
            return shape.Area;
        }

        public static int NeverCalled(int x)
        {
            int y = x * 2;
            if (y > 10) y -= 3;
            return y + 1;
        }
    }

    public sealed class Box<T> where T : IComparable<T>
    {
        readonly List<T> items = new List<T>();

        public void Add(T item)
        {
            items.Add(item);
        }

        public T Max()
        {
            if (items.Count == 0)
            {
                throw new InvalidOperationException("empty");
            }
            T best = items[0];
            foreach (T item in items)
            {
                if (item.CompareTo(best) > 0)
                {
                    best = item;
                }
            }
            return best;
        }

        public int Count => items.Count;
    }

    // Guard clauses (the shapes of issue 52's GuardClauses): overloads, a
    // branch on an awaited value, a method no test calls, and a throw of
    // `x ?? new ...`.
    public static class Guards
    {
        public static int Negative(int value)
        {
            if (value >= 0)
            {
                throw new ArgumentException("not negative", nameof(value));
            }
            return value;
        }

        public static double Negative(double value)
        {
            if (value >= 0)
            {
                throw new ArgumentException("not negative", nameof(value));
            }
            return value;
        }

        public static async Task<T> SatisfiesAsync<T>(T input, Func<T, Task<bool>> predicate)
        {
            if (!await predicate(input))
            {
                throw new ArgumentException("predicate failed", nameof(input));
            }
            return input;
        }

        public static T Satisfies<T>(T input, Func<T, bool> predicate)
        {
            if (!predicate(input))
            {
                throw new ArgumentException("predicate failed", nameof(input));
            }
            return input;
        }

        public static string NotNull(string input, Exception exception)
        {
            if (input is null)
            {
                throw exception ?? new ArgumentNullException(nameof(input));
            }
            return input;
        }
    }
}
