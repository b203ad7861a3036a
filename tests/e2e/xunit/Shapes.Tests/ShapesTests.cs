using System;
using System.Linq;
using System.Threading.Tasks;
using Shapes;
using Xunit;

public class ShapesTests
{
    [Fact]
    public void CirclesAndRects()
    {
        Assert.Equal("round", Geometry.Classify(new Circle(2)));
        Assert.Equal("square", Geometry.Classify(new Rect(2, 2)));
        Assert.Equal("rectangle", Geometry.Classify(new Rect(2, 3)));
        Assert.Equal(6.0, new Rect(2, 3).Area);
        Assert.StartsWith("Circle of area", new Circle(1).Describe());
    }

    [Fact]
    public void NegativeRadiusThrows()
    {
        Assert.Throws<ArgumentOutOfRangeException>(() => new Circle(-1));
    }

    [Theory]
    [InlineData("triangle", 3)]
    [InlineData("hexagon", -1)]
    public void SidesByName(string name, int expected)
    {
        Assert.Equal(expected, Geometry.Sides(name));
    }

    [Fact]
    public void TotalsSquaresAndLargest()
    {
        Shape[] shapes = { new Circle(1), new Rect(1, 2), new Rect(3, 3) };
        Assert.Equal(Math.PI + 2 + 9, Geometry.TotalArea(shapes), 6);
        Assert.Equal(new[] { 0, 1, 4, 9 }, Geometry.Squares(4).ToArray());
        var largest = Geometry.Largest(shapes, s => s.Area, 2);
        Assert.Equal(9.0, largest[0].Area);
    }

    [Fact]
    public void ParsingFallsBack()
    {
        Assert.Equal(42, Geometry.ParseOrDefault("42", 0));
        Assert.Equal(7, Geometry.ParseOrDefault("x", 7));
        Assert.True(Geometry.Parsed >= 2);
    }

    [Fact]
    public async Task AreaLater()
    {
        Assert.Equal(4.0, await Geometry.AreaLaterAsync(new Rect(2, 2), 5));
        await Assert.ThrowsAsync<ArgumentNullException>(() => Geometry.AreaLaterAsync(null, 1));
    }

    [Fact]
    public async Task Guards()
    {
        Assert.Equal(-1, Shapes.Guards.Negative(-1));
        Assert.Equal(-2.5, Shapes.Guards.Negative(-2.5));
        Assert.Throws<ArgumentException>(() => Shapes.Guards.Negative(1));
        Assert.Equal(3, await Shapes.Guards.SatisfiesAsync(3, x => Task.FromResult(x > 0)));
        Assert.Equal(4, await Shapes.Guards.SatisfiesAsync(4, x => Task.FromResult(x > 0)));
        await Assert.ThrowsAsync<ArgumentException>(
            () => Shapes.Guards.SatisfiesAsync(-3, x => Task.FromResult(x > 0)));
        Assert.Equal("a", Shapes.Guards.NotNull("a", null));
        Assert.Throws<ArgumentNullException>(() => Shapes.Guards.NotNull(null, null));
        Assert.Throws<FormatException>(() => Shapes.Guards.NotNull(null, new FormatException()));
    }

    /// Fails when the Rust test asks (SHAPES_FAIL=1): a failing run must
    /// still give its report, and its exit code.
    [Fact]
    public void FailsWhenAsked()
    {
        Assert.NotEqual("1", Environment.GetEnvironmentVariable("SHAPES_FAIL"));
    }

    [Fact]
    public void BoxMax()
    {
        var box = new Box<int>();
        box.Add(3);
        box.Add(9);
        box.Add(4);
        Assert.Equal(9, box.Max());
        Assert.Equal(3, box.Count);
    }
}

public class RuntimeTests
{
    /// Writes the runtime's version where the Rust test asks (environment
    /// variable SHAPES_RUNTIME_FILE), so it knows which runtime ran the
    /// tests.
    [Fact]
    public void SaysWhichRuntime()
    {
        string file = Environment.GetEnvironmentVariable("SHAPES_RUNTIME_FILE");
        if (!string.IsNullOrEmpty(file))
        {
            System.IO.File.WriteAllText(file, Environment.Version.ToString());
        }
    }
}
